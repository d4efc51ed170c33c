-- The server key's check (server/server-key-check.ts): a value sealed with the key of the first console that started on
-- this database. Two consoles started at once on an empty database with different keys (each its own data folder's) found
-- nothing sealed to check against, and each went on sealing with its own key; now the first to start writes this row, and
-- a console whose key does not open it stops before it serves anything.
CREATE TABLE "server_key_check" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "server_key_check_one_row" CHECK ("server_key_check"."id" = 1)
);
