// Types of scripts/entries.mjs, for tsup.config.ts and the tests.
export interface Entry {
  subpath: string;
  source: string;
  /** Optional peer packages the entry point needs. */
  peers?: string[];
}
export declare const ENTRIES: readonly Entry[];
export declare const CLI_ENTRY: { name: string; source: string };
export declare function entryName(subpath: string): string;
export declare function specifier(subpath: string, pkgName?: string): string;
export declare function tsupEntries(): Record<string, string>;
export declare function entrySources(): string[];
export declare function entryListProblems(root: string): string[];
