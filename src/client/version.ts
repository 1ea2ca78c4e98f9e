// The package's version, for the User-Agent. The bundler inlines this one
// field of package.json at build time; nothing reads package.json at run time.
import { version } from "../../package.json";

/** This library's version, e.g. `0.1.0`. */
export const VERSION: string = version;

/** The User-Agent of every request: `trajectory-recorder/<version>`. */
export const USER_AGENT = `trajectory-recorder/${VERSION}`;
