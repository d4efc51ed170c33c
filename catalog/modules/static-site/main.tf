# A static site written under the connection's root directory.

resource "random_pet" "suffix" {
  length = 2
  keepers = {
    site_name = var.site_name
  }
}

locals {
  site_dir   = "sites/${var.site_name}-${random_pet.suffix.id}"
  index_html = <<-HTML
    <!doctype html>
    <html>
      <head><title>${var.title}</title></head>
      <body>
        <h1>${var.title}</h1>
        <p>${upper(var.site_name)} has ${var.page_count} pages.</p>
      </body>
    </html>
  HTML
}

resource "local_directory" "site" {
  path = local.site_dir
}

resource "local_file" "index" {
  filename        = "${local_directory.site.path}/index.html"
  content         = local.index_html
  file_permission = "0644"
  depends_on      = [local_directory.site]
}

resource "local_file" "robots" {
  filename = "${local_directory.site.path}/robots.txt"
  content  = "User-agent: *\nAllow: /\n"
}

resource "terraform_data" "manifest" {
  input = {
    site       = var.site_name
    page_count = var.page_count
    files_hash = sha256(join(",", [local_file.index.content_sha256, local_file.robots.content_sha256]))
  }
}
