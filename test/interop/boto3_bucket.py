"""Lists a bucket with boto3 (its own venv: test/support/python.ts BOTO3_REQUIREMENTS) and sums it.

  python boto3_bucket.py --s3-endpoint URL --s3-access-key-id K --s3-secret-access-key S --s3-region R [--lines-under PREFIX] <bucket>

Prints {"bytes": N, "objects": N, "intake_bytes": N}: every object's Size, and those under _sink/;
with --lines-under, also "lines" and "line_objects": the lines of the .ndjson objects under PREFIX,
read whole (the console bench counts a sink's rejected rows so).
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
p.add_argument("--s3-session-token")
p.add_argument("--lines-under")
p.add_argument("bucket")
a = p.parse_args()

s3 = boto3.client(
    "s3",
    endpoint_url=a.s3_endpoint,
    aws_access_key_id=a.s3_access_key_id,
    aws_secret_access_key=a.s3_secret_access_key,
    aws_session_token=a.s3_session_token,
    region_name=a.s3_region,
    config=Config(s3={"addressing_style": "path"}, request_checksum_calculation="when_required"),
)
total = objects = intake = lines = line_objects = 0
for page in s3.get_paginator("list_objects_v2").paginate(Bucket=a.bucket):
    for o in page.get("Contents", []):
        total += o["Size"]
        objects += 1
        if o["Key"].startswith("_sink/"):
            intake += o["Size"]
        if a.lines_under is not None and o["Key"].startswith(a.lines_under) and o["Key"].endswith(".ndjson"):
            line_objects += 1
            lines += s3.get_object(Bucket=a.bucket, Key=o["Key"])["Body"].read().count(b"\n")
out = {"bytes": total, "objects": objects, "intake_bytes": intake}
if a.lines_under is not None:
    out.update(lines=lines, line_objects=line_objects)
print(json.dumps(out))
