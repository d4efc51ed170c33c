// The name rule of the organization's secret and variable store, shared by the console, the server
// and the runner (a job's reported output names follow it too, since sensitive outputs become secrets).
export const STORE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const STORE_NAME_RULE = "letters, digits and underscores, not starting with a digit (like DB_PASSWORD)";
