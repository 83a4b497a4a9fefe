// The OsmAnd protocol as Traccar Client (Android, before 9.0) sends it: one POST per position, the
// values as query parameters and an empty body. Traccar's server also takes them as a form body,
// and with any method, so this preset maps the parameter names whichever way they come.
// Traccar Client 9.0 and later post JSON instead ({"location": {"coords": …}, "device_id": …}); that
// format is not this preset's.
import type { Preset } from '../types.ts'

export const osmand: Preset = {
  name: 'osmand',
  summary:
    "OsmAnd protocol (Traccar Client before 9.0, OsmAnd-style trackers): id, lat, lon, timestamp, speed, bearing, altitude, accuracy, batt as query or form parameters; set the client's server URL to this route.",
  docs: [
    'https://www.traccar.org/osmand/',
    'https://github.com/traccar/traccar-client-android/blob/master/app/src/main/java/org/traccar/client/ProtocolFormatter.kt',
    'https://github.com/traccar/traccar-client-android/blob/master/app/src/main/java/org/traccar/client/Position.kt',
    'https://github.com/traccar/traccar/blob/master/src/main/java/org/traccar/protocol/OsmAndProtocolDecoder.java',
  ],
  mapping: {
    columns: {
      // id: the protocol's mandatory device identifier (Traccar Client's "Device identifier" setting).
      device: '/id',
      // Traccar Client sends epoch seconds (position.time / 1000). Traccar's server also accepts
      // milliseconds and date strings from other senders; epoch_s converts a numeric string as
      // seconds only (a date string is copied as it is).
      time: { pointer: '/timestamp', as: 'epoch_s' },
      // Knots: Traccar Client converts Android's m/s (location.speed * 1.943844), and the server reads knots.
      speed_knots: '/speed',
      course_deg: '/bearing',
      altitude_m: '/altitude',
      // 0 for a GPS fix: Traccar Client reports accuracy only for network (non-GPS) providers.
      accuracy_m: '/accuracy',
      // Percent (level * 100 / scale).
      battery_pct: '/batt',
      // Sent only with an alarm (e.g. the SOS shortcut).
      alarm: '/alarm',
    },
    point: { column: 'position', lon: '/lon', lat: '/lat' },
  },
  columns: {
    device: 'string',
    time: 'timestamptz',
    position: 'geometry',
    speed_knots: 'double',
    course_deg: 'double',
    altitude_m: 'double',
    accuracy_m: 'double',
    battery_pct: 'double',
    alarm: 'string',
  },
  // No naturalId: Traccar Client keeps an unsent position in its database and rebuilds the same URL
  // from it for each retry, so the bytes already identify it; id + timestamp (whole seconds) could
  // merge two positions taken within one second.
}
