ALTER TABLE "sinks" ADD COLUMN "limits" jsonb;--> statement-breakpoint
ALTER TABLE "usage_counters" ADD COLUMN "rate_limited" bigint DEFAULT 0 NOT NULL;