/** Version of the builtin engine; written to state as terraform_version and shown in lock info. */
export const ENGINE_VERSION = "1.8.0-planton.1";
/** Version of the machine-readable UI format the engine emits. */
export const UI_VERSION = "1.2";
