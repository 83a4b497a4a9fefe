ALTER TABLE "sinks" ADD COLUMN "previous_send_key_sha256" text;--> statement-breakpoint
ALTER TABLE "sinks" ADD COLUMN "previous_send_key_retires_at" timestamp with time zone;