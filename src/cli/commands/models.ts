// `models create|list|get|delete`.
import { ConflictError } from "../../client/index.js";
import { parse, required, str } from "../args.js";
import { type Command, EXIT, print } from "../context.js";
import { isKnownModel, type KnownModel } from "../known.js";
import { confirm, connect, existingModel, YES_HELP, YES_OPTION } from "../service.js";

export const MODEL_REF_HELP = `MODEL is the model's id, ENTITY/PROJECT/NAME, or a unique prefix of its id
(as git takes short hashes), among the models this CLI created or found.`;

const describe = (m: KnownModel | { id: string }) =>
  isKnownModel(m) ? `${m.entity}/${m.project}/${m.name}` : "(name not known here)";

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
    const s = await connect(values, out);
    let model: Awaited<ReturnType<typeof s.client.models.create>>;
    try {
      model = await s.client.models.create(params);
    } catch (error) {
      if (error instanceof ConflictError) {
        throw new ConflictError(
          { method: error.method, path: error.path },
          error.status,
          error.body,
          error.headers,
          `A model named ${params.name} already exists in project ${params.project}. Add --return-existing to use it, or pick another --name.`,
        );
      }
      throw error;
    }
    s.known.rememberModel(model);
    await s.known.save();
    print(
      out,
      values.json,
      model,
      `${model.id}\tmodel ${model.entity}/${model.project ?? params.project}/${model.name ?? params.name} (base ${model.base_model ?? params.base_model})`,
    );
    return EXIT.ok;
  },
};

export const modelsList: Command = {
  name: "models list",
  summary: "list the models this CLI created or found on the service, with their latest step",
  usage: "",
  details: `The service has no endpoint that lists models, so this lists the ones this CLI
created or found (\`models create\`, with --return-existing too) for the service's
URL, each checked on the service; models deleted meanwhile are left out and
forgotten. The list is kept in $TRAJECTORY_RECORDER_STATE_DIR/known.json
(default: $XDG_STATE_HOME/trajectory-recorder, else ~/.local/state/trajectory-recorder).`,
  async run(args, out) {
    const { values } = parse(args, {}, { min: 0, max: 0, names: "" });
    const s = await connect(values, out);
    const rows: (KnownModel & { latest_step: number | null })[] = [];
    for (const m of s.known.models()) {
      try {
        const { latestStep } = await existingModel(s, m.id);
        rows.push({ ...m, latest_step: latestStep });
      } catch (error) {
        if ((error as Error).name !== "NotFoundError") throw error;
      }
    }
    const human =
      rows.length === 0
        ? `No models known for ${s.known.url} (create one with 'models create').`
        : rows
            .map(
              (m) =>
                `${m.id}\t${m.entity}/${m.project}/${m.name}\tbase ${m.base_model}\tstep ${m.latest_step ?? "-"}`,
            )
            .join("\n");
    print(out, values.json, rows, human);
    return EXIT.ok;
  },
};

export const modelsGet: Command = {
  name: "models get",
  summary: "show a model and its latest step",
  usage: "MODEL",
  details: `${MODEL_REF_HELP}
Exits 4 when the service has no such model.`,
  async run(args, out) {
    const { values, positionals } = parse(args, {}, { min: 1, max: 1, names: "MODEL" });
    const s = await connect(values, out);
    const { model, latestStep } = await existingModel(s, positionals[0] as string);
    const shown = { ...model, latest_step: latestStep };
    print(
      out,
      values.json,
      shown,
      Object.entries(shown)
        .filter(([, v]) => v !== null && v !== undefined && v !== "")
        .map(([k, v]) => `${k}: ${v}`)
        .join("\n"),
    );
    return EXIT.ok;
  },
};

export const modelsDelete: Command = {
  name: "models delete",
  summary: "delete a model with its checkpoints (asks first)",
  usage: "MODEL [--yes]",
  details: `${MODEL_REF_HELP}
Deletes the model and every checkpoint of it on the service. Asks on a
terminal; elsewhere --yes is required.

Options:
${YES_HELP}`,
  async run(args, out) {
    const { values, positionals } = parse(args, YES_OPTION, {
      min: 1,
      max: 1,
      names: "MODEL",
    });
    const s = await connect(values, out);
    const { model, latestStep } = await existingModel(s, positionals[0] as string);
    const ok = await confirm(
      values,
      out,
      `Delete model ${model.id} (${describe(model)}) and its checkpoints${latestStep !== null ? ` up to step ${latestStep}` : ""}?`,
    );
    if (!ok) {
      out.stderr.write("Nothing was deleted.\n");
      return EXIT.failure;
    }
    const answer = await s.client.models.delete(model.id);
    s.known.forgetModel(model.id);
    await s.known.save();
    print(
      out,
      values.json,
      answer,
      `Deleted model ${model.id} and ${answer.deleted_checkpoints} checkpoint(s).`,
    );
    return EXIT.ok;
  },
};
