variable "site_name" {
  type        = string
  description = "Name of the site; becomes part of its folder name."
}

variable "title" {
  type        = string
  default     = "Hello from Planton"
  description = "Page title shown on index.html."
}

variable "page_count" {
  type        = number
  default     = 2
  description = "How many pages the manifest announces."
}
