// PLACEHOLDER until the trajectory work lands: the final schemas keep these names.
import { z } from "zod";

export const TrajectoryWireSchema = z.looseObject({
  messages_and_choices: z.array(z.any()).default([]),
  reward: z.number().default(0),
});
export type TrajectoryWire = z.infer<typeof TrajectoryWireSchema>;

export const TrajectoryGroupWireSchema = z.looseObject({
  trajectories: z.array(TrajectoryWireSchema),
});
export type TrajectoryGroupWire = z.infer<typeof TrajectoryGroupWireSchema>;
