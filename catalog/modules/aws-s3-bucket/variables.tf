variable "bucket_name" {
  type        = string
  description = "Globally unique bucket name."

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{2,62}$", var.bucket_name))
    error_message = "bucket_name must be 3–63 lower-case letters, digits, dots and dashes."
  }
}

variable "versioning" {
  type        = bool
  default     = true
  description = "Keep every version of each object."
}
