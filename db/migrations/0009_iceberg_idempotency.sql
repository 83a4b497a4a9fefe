CREATE TABLE "iceberg_idempotency" (
	"project_id" text NOT NULL,
	"key" text NOT NULL,
	"request_sha256" text NOT NULL,
	"status" integer,
	"response" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "iceberg_idempotency_project_id_key_pk" PRIMARY KEY("project_id","key")
);
--> statement-breakpoint
ALTER TABLE "iceberg_idempotency" ADD CONSTRAINT "iceberg_idempotency_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "iceberg_idempotency_created" ON "iceberg_idempotency" USING btree ("created_at");