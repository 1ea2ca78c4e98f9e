import { describe, expect, it } from "vitest";
import { parseFormula } from "../../../src/rewards/graders/expression.js";

const run = (formula: string, values: Record<string, number> = {}) =>
  parseFormula(formula).evaluate(values);

describe("multi grader formulas", () => {
  it("computes with the usual precedence, right-associative powers and the named functions", () => {
    expect(run("1 + 2 * 3")).toBe(7);
    expect(run("(1 + 2) * 3")).toBe(9);
    expect(run("2 ^ 3 ^ 2")).toBe(512);
    expect(run("-2 ^ 2")).toBe(-4);
    expect(run("10 / 4 - -1")).toBe(3.5);
    expect(
      run("min(a, b, 0.7) + max(a, b) + abs(-1) + floor(1.5) + ceil(1.2)", { a: 0.5, b: 0.9 }),
    ).toBe(0.5 + 0.9 + 1 + 1 + 2);
    expect(run("exp(0) + sqrt(16) + log(1)")).toBe(5);
    expect(
      run("0.5 * string_check + 0.5 * model_score / 10", { string_check: 1, model_score: 8 }),
    ).toBeCloseTo(0.9);
    expect(run(".5e1")).toBe(5);
  });

  it("names the graders a formula uses", () => {
    expect([...parseFormula("a + min(b, a) * 2").names]).toEqual(["a", "b"]);
  });

  it("refuses anything outside its grammar, saying where", () => {
    expect(() => parseFormula("process.exit(1)")).toThrow(
      'unexpected character "." at character 8',
    );
    expect(() => parseFormula("constructor(1)")).toThrow(/unknown function \(known: min, max/);
    expect(() => parseFormula("a +")).toThrow("expected a number, a grader name or ( at the end");
    expect(() => parseFormula("(a + b")).toThrow('expected ")" at the end');
    expect(() => parseFormula("a b")).toThrow('unexpected at "b" (character 3)');
    expect(() => parseFormula("abs(1, 2)")).toThrow("abs() takes 1 argument(s), got 2");
    expect(() => parseFormula("a; b")).toThrow('unexpected character ";"');
  });
});
