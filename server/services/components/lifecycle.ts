// The direct path (lib/component-lifecycle.ts), one operation per file: create and change queue an
// update job, delete runs a destroy job, forget lets go without destroying, and a destroy job's end
// decides deleted or delete_failed. What the components router and other callers import.
export { createComponentAndDeploy } from "./create-component";
export { changeComponent } from "./update-component";
export { deleteComponent } from "./delete-component";
export { forgetComponent } from "./forget-component";
export { onComponentJobCompleted } from "./job-outcome";
export { listComponentVersions } from "./versions";
export { getComponentView, listComponentViews, type ComponentChange, type ComponentView } from "./views";
