// The one name rule for what people name and then type on the command line: components,
// connections, runners and state backends. Server schemas and the console's forms both use it.
import { z } from "zod";

const NAME = /^[a-z][a-z0-9-]{1,62}$/;

/** "Name must be 2–63 lower-case letters, …", with an example where one helps. */
export const nameRuleMessage = (example?: string) => `Name must be 2–63 lower-case letters, digits and dashes, starting with a letter${example ? ` (e.g. ${example})` : ""}`;

/** Why `name` is not a valid name, or null when it is (the forms' check before they send). */
export const nameRefusal = (name: string, example?: string): string | null => (NAME.test(name) ? null : nameRuleMessage(example));

/** A name field (trimmed) with the rule's message. */
export const nameSchema = (example?: string) => z.string().trim().regex(NAME, { error: nameRuleMessage(example) });

// Environment names are shorter: they prefix state keys and secret scopes.
const ENVIRONMENT = /^[a-z][a-z0-9-]{0,30}$/;
const environmentRule = "Name must be lower-case letters, digits and dashes, starting with a letter (at most 31)";
export const environmentNameRefusal = (name: string): string | null => (ENVIRONMENT.test(name) ? null : environmentRule);
export const environmentNameSchema = () => z.string().trim().regex(ENVIRONMENT, { error: environmentRule });
