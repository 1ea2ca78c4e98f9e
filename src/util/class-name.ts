// The build renames a class that refers to itself in a static block
// (`class _Trajectory`), so its `name` would read `_Trajectory` in dist. The
// bundler's keepNames would fix that, but it also wraps every function and
// closure in a name-setting call, and closures made per call (the recorder's
// wrappers make several for each completion) then cost about a microsecond
// each. Such classes set their name here instead, once.

/** Gives `Class` the name it is written with, when the build renamed it. */
export function keepClassName(Class: { readonly name: string }, name: string): void {
  if (Class.name !== name)
    Object.defineProperty(Class, "name", { value: name, configurable: true });
}
