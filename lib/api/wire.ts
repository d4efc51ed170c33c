// What a schema's value looks like as JSON on the wire of REST: Dates become ISO strings.
import type { z } from "zod";

export type Wire<T> = T extends Date
  ? string
  : T extends (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

/** The REST answer of a procedure whose output is `S`. */
export type Answer<S extends z.ZodType> = Wire<z.output<S>>;
