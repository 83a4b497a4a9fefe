CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"level" text NOT NULL,
	"key_sha256" text NOT NULL,
	"name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_level" CHECK ("api_keys"."level" in ('read', 'write', 'admin'))
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"subject" text NOT NULL,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "batches" (
	"sink_id" text NOT NULL,
	"batch_id" text NOT NULL,
	"body_sha256" text NOT NULL,
	"bytes" bigint NOT NULL,
	"rows" integer NOT NULL,
	"rejected" integer DEFAULT 0 NOT NULL,
	"reasons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"received_at" timestamp(6) with time zone NOT NULL,
	"state" text DEFAULT 'receiving' NOT NULL,
	"snapshot_id" bigint,
	"committed_at" timestamp with time zone,
	CONSTRAINT "batches_sink_id_batch_id_pk" PRIMARY KEY("sink_id","batch_id"),
	CONSTRAINT "batches_state" CHECK ("batches"."state" in ('receiving', 'pending', 'committed', 'discarded'))
);
--> statement-breakpoint
CREATE TABLE "iceberg_namespace_properties" (
	"catalog_name" varchar(255) NOT NULL,
	"namespace" varchar(255) NOT NULL,
	"property_key" varchar(255) NOT NULL,
	"property_value" varchar(1000) NOT NULL,
	CONSTRAINT "iceberg_namespace_properties_catalog_name_namespace_property_key_pk" PRIMARY KEY("catalog_name","namespace","property_key")
);
--> statement-breakpoint
CREATE TABLE "iceberg_tables" (
	"catalog_name" varchar(255) NOT NULL,
	"table_namespace" varchar(255) NOT NULL,
	"table_name" varchar(255) NOT NULL,
	"metadata_location" varchar(1000),
	"previous_metadata_location" varchar(1000),
	CONSTRAINT "iceberg_tables_catalog_name_table_namespace_table_name_pk" PRIMARY KEY("catalog_name","table_namespace","table_name")
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "projects_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "roll_reports" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"sink_id" text NOT NULL,
	"roll_id" text NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"batches" integer NOT NULL,
	"rows" bigint NOT NULL,
	"rejected_rows" bigint NOT NULL,
	"snapshot_id" bigint,
	"seconds" integer NOT NULL,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "sinks" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"warehouse_id" text NOT NULL,
	"name" text NOT NULL,
	"table_namespace" text NOT NULL,
	"table_name" text NOT NULL,
	"send_key_sha256" text NOT NULL,
	"roll_seconds" integer DEFAULT 300 NOT NULL,
	"roll_bytes" bigint DEFAULT 67108864 NOT NULL,
	"inactivity_seconds" integer,
	"key_columns" jsonb,
	"state" text DEFAULT 'active' NOT NULL,
	"disabled_reason" text,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"dedupe_requested_at" timestamp with time zone,
	"dedupe_last" jsonb,
	"last_roll" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"deleted_at" timestamp with time zone,
	CONSTRAINT "sinks_state" CHECK ("sinks"."state" in ('active', 'disabled', 'deleted'))
);
--> statement-breakpoint
CREATE TABLE "usage_counters" (
	"project_id" text NOT NULL,
	"sink_id" text NOT NULL,
	"month" date NOT NULL,
	"batches" bigint DEFAULT 0 NOT NULL,
	"bytes" bigint DEFAULT 0 NOT NULL,
	"rows_accepted" bigint DEFAULT 0 NOT NULL,
	"rows_rejected" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_counters_project_id_sink_id_month_pk" PRIMARY KEY("project_id","sink_id","month")
);
--> statement-breakpoint
CREATE TABLE "warehouses" (
	"id" text PRIMARY KEY NOT NULL,
	"project_id" text NOT NULL,
	"name" text NOT NULL,
	"catalog" jsonb NOT NULL,
	"bucket" text NOT NULL,
	"endpoint" text NOT NULL,
	"region" text NOT NULL,
	"prefix" text DEFAULT '' NOT NULL,
	"maintenance" text DEFAULT 'roller' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "warehouses_maintenance" CHECK ("warehouses"."maintenance" in ('roller', 'off'))
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "batches" ADD CONSTRAINT "batches_sink_id_sinks_id_fk" FOREIGN KEY ("sink_id") REFERENCES "public"."sinks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "roll_reports" ADD CONSTRAINT "roll_reports_sink_id_sinks_id_fk" FOREIGN KEY ("sink_id") REFERENCES "public"."sinks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sinks" ADD CONSTRAINT "sinks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sinks" ADD CONSTRAINT "sinks_warehouse_id_warehouses_id_fk" FOREIGN KEY ("warehouse_id") REFERENCES "public"."warehouses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_counters" ADD CONSTRAINT "usage_counters_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "warehouses" ADD CONSTRAINT "warehouses_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_events_project" ON "audit_events" USING btree ("project_id","at");--> statement-breakpoint
CREATE INDEX "batches_pending" ON "batches" USING btree ("sink_id","received_at") WHERE "batches"."state" in ('receiving', 'pending');--> statement-breakpoint
CREATE INDEX "batches_prune" ON "batches" USING btree ("committed_at") WHERE "batches"."state" = 'committed';--> statement-breakpoint
CREATE INDEX "roll_reports_sink" ON "roll_reports" USING btree ("sink_id","at");--> statement-breakpoint
CREATE UNIQUE INDEX "sinks_one_per_table" ON "sinks" USING btree ("warehouse_id","table_namespace","table_name") WHERE "sinks"."state" <> 'deleted';--> statement-breakpoint
CREATE UNIQUE INDEX "sinks_project_name" ON "sinks" USING btree ("project_id","name") WHERE "sinks"."state" <> 'deleted';--> statement-breakpoint
CREATE UNIQUE INDEX "warehouses_project_name" ON "warehouses" USING btree ("project_id","name");