// The runner API's routes as its table declares them (server/runner-api/routes.ts), for the suites that
// must cover every one (the bad-input sweep, the job-credential matrix): a new route is in them at once.
export { runnerApiRoutes as runnerRoutes } from "../server/runner-api/routes";
