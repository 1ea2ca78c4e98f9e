// The shipper: queue, retries, spool, training every N groups.
export {
  type ShipperLogger,
  type ShipperStats,
  TrajectoryShipper,
  type TrajectoryShipperOptions,
} from "./shipper.js";
