// `.lua` files are imported as their text (see ./index.ts).
declare module "*.lua" {
  const source: string;
  export default source;
}
