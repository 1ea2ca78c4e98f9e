// The page's inline style and script (plain browser JavaScript, no
// dependencies), assembled from one small file per view under ./viewer/.
// The script reads the index when the page opens and parses a chunk of
// trajectories only when it shows one of them. Recorded content only ever
// reaches the page as text (textContent, title), never as markup.
//
// A new view adds its file here, its section in render.ts, and its tab.
import { BASE } from "./viewer/base.js";
import { COMPARE } from "./viewer/compare.js";
import { GROUPS } from "./viewer/groups.js";
import { KEYS } from "./viewer/keys.js";
import { LIVE } from "./viewer/live.js";
import { PRODUCTION } from "./viewer/production.js";
import { ROUTES } from "./viewer/routes.js";
import { STYLE as VIEW_STYLE } from "./viewer/style.js";
import { TRAJECTORY } from "./viewer/trajectory.js";

export const STYLE = VIEW_STYLE;

export const SCRIPT = `
(function () {
  "use strict";
${BASE}${ROUTES}${GROUPS}${TRAJECTORY}${COMPARE}${PRODUCTION}${LIVE}${KEYS}})();
`;
