"""Counts the lines of the .ndjson objects under a prefix with boto3 (the console bench's read-back).

  python boto3_lines.py --s3-endpoint URL --s3-access-key-id K --s3-secret-access-key S --s3-region R <bucket> <prefix>

Prints {"objects": N, "lines": N}.
"""

import argparse
import json

import boto3
from botocore.config import Config

p = argparse.ArgumentParser()
p.add_argument("--s3-endpoint", required=True)
p.add_argument("--s3-access-key-id", required=True)
p.add_argument("--s3-secret-access-key", required=True)
p.add_argument("--s3-region", required=True)
p.add_argument("bucket")
p.add_argument("prefix")
a = p.parse_args()

s3 = boto3.client(
    "s3",
    endpoint_url=a.s3_endpoint,
    aws_access_key_id=a.s3_access_key_id,
    aws_secret_access_key=a.s3_secret_access_key,
    region_name=a.s3_region,
    config=Config(s3={"addressing_style": "path"}, request_checksum_calculation="when_required"),
)
objects = lines = 0
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=a.bucket, Prefix=a.prefix):
    for o in page.get("Contents", []):
        if not o["Key"].endswith(".ndjson"):
            continue
        objects += 1
        body = s3.get_object(Bucket=a.bucket, Key=o["Key"])["Body"].read()
        lines += body.count(b"\n")
print(json.dumps({"objects": objects, "lines": lines}))
