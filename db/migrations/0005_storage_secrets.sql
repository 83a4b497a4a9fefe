ALTER TABLE "sinks" ADD COLUMN "last_error" jsonb;--> statement-breakpoint
ALTER TABLE "warehouses" ADD COLUMN "catalog_secret" text;--> statement-breakpoint
ALTER TABLE "warehouses" ADD COLUMN "storage" jsonb;--> statement-breakpoint
ALTER TABLE "warehouses" ADD COLUMN "measure_next_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "warehouses" ADD COLUMN "measure_requested_at" timestamp(3) with time zone;--> statement-breakpoint
ALTER TABLE "warehouses" ADD COLUMN "measure_lease_until" timestamp with time zone;