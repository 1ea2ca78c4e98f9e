// A compile-time check that a type written out by hand (an interface, so the
// published declarations name it rather than `z.infer<typeof XSchema>`) is the
// very type its zod schema gives. `sameType<A, B>(true)` compiles only when A
// and B are identical; the call does nothing at run time.
type Identical<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export function sameType<A, B>(ok: Identical<A, B>): void {
  void ok;
}

/** An intersection or alias flattened into one object type, for `sameType`. */
export type Flat<T> = { [K in keyof T]: T[K] };
