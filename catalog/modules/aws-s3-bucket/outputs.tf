output "bucket_name" {
  value       = aws_s3_bucket.this.bucket
  description = "The bucket's name."
}

output "bucket_arn" {
  value       = aws_s3_bucket.this.arn
  description = "The bucket's ARN."
}

output "bucket_regional_domain_name" {
  value       = aws_s3_bucket.this.bucket_regional_domain_name
  description = "The bucket's regional domain name."
}

output "versioning_status" {
  value       = aws_s3_bucket_versioning.this.versioning_configuration[0].status
  description = "Enabled or Suspended."
}
