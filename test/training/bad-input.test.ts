import {
  InvalidArgumentError,
  LocalFileUploader,
  PresignedUrlUploader,
  WandbArtifactUploader,
} from "trajectory-recorder";
import { expect, it } from "vitest";
import { defaultSftUploader, manifestDigest } from "../../src/training/index.js";

it("the uploaders and their helpers name a bad argument, and never quote a key", () => {
  expect(() => new WandbArtifactUploader(null as never)).toThrow(InvalidArgumentError);
  expect(() => new WandbArtifactUploader(null as never)).toThrow(
    "new WandbArtifactUploader(options): options: expected an object, received null.",
  );
  expect(() => new WandbArtifactUploader({ apiKey: 5 as never })).toThrow(
    /options\.apiKey: expected a string, received a number/,
  );
  let bad: unknown;
  try {
    new WandbArtifactUploader({ apiKey: "secret-key-1", baseUrl: "not a url" });
  } catch (error) {
    bad = error;
  }
  expect(String(bad)).toContain("options.baseUrl: expected an https:// URL, received a string.");
  expect(String(bad)).not.toContain("secret-key-1");
  expect(() => new LocalFileUploader(undefined as never)).toThrow(
    "new LocalFileUploader(dir): dir: expected a directory path, received undefined.",
  );
  expect(() => new PresignedUrlUploader({ presign: 1 } as never)).toThrow(
    /options\.presign: expected a function returning \{ uploadUrl \}, received a number/,
  );
  expect(() => manifestDigest(null as never)).toThrow(
    "manifestDigest(contents): contents: expected an object of file names to digests, received null.",
  );
  expect(() => manifestDigest({ "a.jsonl": Symbol() } as never)).toThrow(
    /contents\["a\.jsonl"\]: expected a digest string, received a symbol/,
  );
  expect(() => defaultSftUploader(null as never)).toThrow(
    "defaultSftUploader(client): client: expected a TrainingClient, received null.",
  );
});
