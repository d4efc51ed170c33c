# Credentials for an application database. The password stays in state (sensitive) and in the
# password output; the .env file written to disk carries only the database and user names.

variable "database_name" {
  type        = string
  description = "Logical database name."
}

variable "username" {
  type    = string
  default = "app"
}

resource "random_id" "db_suffix" {
  byte_length = 4
  keepers = {
    database_name = var.database_name
  }
}

resource "random_password" "password" {
  length           = 24
  special          = true
  override_special = "-_"
}

locals {
  database = "${var.database_name}_${random_id.db_suffix.hex}"
}

resource "local_file" "config" {
  filename = "credentials/${var.database_name}.env"
  content  = format("DB_NAME=%s\nDB_USER=%s\n", local.database, var.username)
}

resource "terraform_data" "rotation" {
  input            = { database = local.database, username = var.username }
  triggers_replace = [random_password.password.id]
}

output "database" {
  value = local.database
}

output "username" {
  value = var.username
}

output "password" {
  value     = random_password.password.result
  sensitive = true
}
