-- The Audit page's filters that match little or nothing read the organization's whole record (bench/audit.ts, 200 000
-- events: 146–157 ms each, five times that at a million): an environment or a target kind with no events yet, and a
-- family of actions ("flow_control") with none, whose LIKE the (org_id, action, seq) index could not answer in a
-- database whose collation is not C. Each now has an index that finds its events, or that there are none, at once;
-- the action index is kept in the C collation, so that a family is a range of it.
DROP INDEX "audit_events_org_action_seq_idx";--> statement-breakpoint
CREATE INDEX "audit_events_org_action_seq_idx" ON "audit_events" USING btree ("org_id","action" COLLATE "C","seq");--> statement-breakpoint
CREATE INDEX "audit_events_org_environment_seq_idx" ON "audit_events" USING btree ("org_id","environment","seq");--> statement-breakpoint
CREATE INDEX "audit_events_org_target_type_seq_idx" ON "audit_events" USING btree ("org_id","target_type","seq");
