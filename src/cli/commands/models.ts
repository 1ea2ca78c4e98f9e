// `models create` and `models delete`.
import { parse, required, str } from "../args.js";
import { type Command, makeClient, print } from "../context.js";

export const modelsCreate: Command = {
  name: "models create",
  summary: "register a trainable model (or find one with --return-existing)",
  usage: "--project NAME --name NAME --base-model MODEL [--entity NAME] [--return-existing]",
  details: `Options:
  --project NAME        project the model belongs to
  --name NAME           the model's name, unique in its project
  --base-model MODEL    the base model to fine-tune, e.g. OpenPipe/Qwen3-14B-Instruct
  --entity NAME         team or user (default: the owner of the API key)
  --return-existing     answer with the existing model of that name instead of failing`,
  async run(args, out) {
    const { values } = parse(
      args,
      {
        project: { type: "string" },
        name: { type: "string" },
        "base-model": { type: "string" },
        entity: { type: "string" },
        "return-existing": { type: "boolean" },
      },
      { min: 0, max: 0, names: "" },
    );
    const params = {
      project: required(values, "project"),
      name: required(values, "name"),
      base_model: required(values, "base-model"),
      entity: str(values, "entity") ?? null,
      return_existing: values["return-existing"] === true,
    };
    const model = await makeClient(values).models.create(params);
    print(
      out,
      values.json,
      model,
      `${model.id}\tmodel ${model.entity}/${model.project ?? params.project}/${model.name ?? params.name} (base ${model.base_model ?? params.base_model})`,
    );
    return 0;
  },
};

export const modelsDelete: Command = {
  name: "models delete",
  summary: "delete a model with its checkpoints",
  usage: "MODEL_ID",
  details: "Deletes the model and every checkpoint of it on the service.",
  async run(args, out) {
    const { values, positionals } = parse(args, {}, { min: 1, max: 1, names: "MODEL_ID" });
    const id = positionals[0] as string;
    const answer = await makeClient(values).models.delete(id);
    print(
      out,
      values.json,
      answer,
      `Deleted model ${id} and ${answer.deleted_checkpoints} checkpoint(s).`,
    );
    return 0;
  },
};
