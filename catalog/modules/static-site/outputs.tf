output "site_path" {
  value       = local_directory.site.path
  description = "Folder of the site, relative to the connection root."
}

output "index_sha256" {
  value = local_file.index.content_sha256
}
