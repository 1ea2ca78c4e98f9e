// Moved to src/trajectory/prepared.ts; kept for the imports that name this path.
export { PreparedGroup } from "../trajectory/prepared.js";
