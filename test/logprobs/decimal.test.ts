import { describe, expect, it } from "vitest";
import { longDigits } from "../../src/logprobs/decimal.js";

// Logprobs arrive as shortest round-trip doubles (16 or 17 digits, above
// 2^53): the scan reads most of them here, without a string for Number(),
// and must give exactly the double JSON.parse gives, or NaN (Number() then).

let seed = 5;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

/** longDigits of a literal without sign or exponent, scaled by its `.`; undefined when not settled. */
function read(literal: string, exponent = 0): number | undefined {
  const dot = literal.indexOf(".");
  const v = longDigits(literal, 0, literal.length, literal.length - dot - 1 - exponent);
  return Number.isNaN(v) ? undefined : v;
}

describe("longDigits", () => {
  it("settles almost every 16- and 17-digit double a server writes, to JSON.parse's double", () => {
    let settled = 0;
    let long = 0;
    for (let i = 0; i < 20000; i++) {
      const literal = String(rand() * 20 * 10 ** -Math.floor(rand() * 4));
      if (literal.includes("e") || literal.replace(/^0\.0*|\./g, "").length < 16) continue;
      long++;
      const v = read(literal);
      if (v === undefined) continue;
      settled++;
      expect(v).toBe(JSON.parse(literal));
    }
    expect(long).toBeGreaterThan(10000);
    expect(settled / long).toBeGreaterThan(0.99);
  });

  it("gives JSON.parse's double for any 16 to 18 digits, or leaves them to Number()", () => {
    for (let i = 0; i < 20000; i++) {
      const count = 16 + Math.floor(rand() * 3);
      let digits = String(1 + Math.floor(rand() * 9));
      while (digits.length < count) digits += Math.floor(rand() * 10);
      const point = Math.floor(rand() * 4);
      const literal =
        point === 0
          ? `0.${"0".repeat(Math.floor(rand() * 5))}${digits}`
          : `${digits.slice(0, point)}.${digits.slice(point)}`;
      const v = read(literal);
      if (v !== undefined) expect(v).toBe(JSON.parse(literal));
    }
  });

  it("reads the digits of a number with an exponent (Python writes 1.2345678901234567e-05)", () => {
    expect(read("1.2345678901234567", -5)).toBe(JSON.parse("1.2345678901234567e-05"));
  });

  it("leaves ties, and more than 18 digits, to Number()", () => {
    // 2^53 + 1, exactly between two doubles, and the same with 19 digits.
    expect(read("9007199254740993.0")).toBeUndefined();
    expect(read("0.9007199254740993000")).toBeUndefined();
    expect(read("900719925474099.3")).toBe(JSON.parse("900719925474099.3"));
  });
});
