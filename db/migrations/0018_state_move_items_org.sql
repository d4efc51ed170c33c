-- A move item's organization is its move's (state_moves.org_id); nothing read the item's own copy, and its foreign key
-- cost a lookup per inserted item: on bench/state-move.ts about 170 ms of a 10 000-state move's start (a sixth of it).
-- An organization's deletion still removes its moves' items: organizations → state_moves → state_move_items cascade.
ALTER TABLE "state_move_items" DROP COLUMN "org_id";
