// The smallest trajectories `train` accepts by default: one prompt and one
// sampled Choice carrying logprobs and vLLM's token ids, as the recorder
// records them. Tests that train hand-built groups use these so the check
// before training (which refuses groups with nothing to learn from) passes.
// Every field is spelled out with the wire schema's defaults, so a request
// body compares equal to what the test built.

/** A sampled assistant turn the trainer learns from. */
export function trainableChoice(content = "red") {
  return {
    finish_reason: "stop" as const,
    index: 0,
    logprobs: {
      content: [{ token: "token_id:7", bytes: null, logprob: -0.25, top_logprobs: [] }],
      refusal: null,
    },
    message: { content, refusal: null, role: "assistant" as const },
    token_ids: [7],
    prompt_token_ids: [1, 2, 3],
  };
}

/** One trajectory (ART JSON): a user prompt answered by a trainable Choice. */
export function trainableTrajectory(reward: number, answer = "red", prompt = "please say red") {
  return {
    messages_and_choices: [{ role: "user" as const, content: prompt }, trainableChoice(answer)],
    reward,
  };
}

/** A group (ART JSON) of trainable trajectories, one per reward. */
export function trainableGroup(...rewards: number[]) {
  return { trajectories: rewards.map((reward) => trainableTrajectory(reward)) };
}
