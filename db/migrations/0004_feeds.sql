ALTER TABLE "sinks" ADD COLUMN "feed" jsonb;--> statement-breakpoint
ALTER TABLE "sinks" ADD COLUMN "feed_next_run_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sinks" ADD COLUMN "feed_run_requested_at" timestamp(3) with time zone;--> statement-breakpoint
ALTER TABLE "sinks" ADD COLUMN "feed_last_run" jsonb;