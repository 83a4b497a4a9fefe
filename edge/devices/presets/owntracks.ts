// OwnTracks (iOS and Android) in HTTP mode: each POST is one JSON object, the same payload the apps
// publish over MQTT. Only `_type: "location"` becomes a row; lwt, transition, waypoint(s), card,
// status, steps and the rest are dropped by `require`.
import type { Preset } from '../types.ts'

export const owntracks: Preset = {
  name: 'owntracks',
  summary:
    'OwnTracks in HTTP mode: set the app\'s URL to this route; each "location" message becomes a row (lwt, transition, waypoint and card messages are ignored).',
  docs: ['https://owntracks.org/booklet/tech/json/', 'https://owntracks.org/booklet/tech/http/', 'https://owntracks.org/booklet/guide/quicksetup/'],
  mapping: {
    columns: {
      // The HTTP payload names no device (iOS adds `topic`, Android the X-Limit-D header): the route's path id.
      device: { device: true },
      // tst: epoch seconds of the fix.
      time: { pointer: '/tst', as: 'epoch_s' },
      // acc, alt, vel, cog are documented as integers; double so a fractional value from any app
      // version is stored rather than refused. The booklet: they are sent only when not zero.
      accuracy_m: '/acc',
      altitude_m: '/alt',
      speed_kmh: '/vel',
      course_deg: '/cog',
      battery_pct: '/batt',
      // bs: 0 unknown, 1 unplugged, 2 charging, 3 full.
      battery_status: '/bs',
      tracker_id: '/tid',
      // t: what triggered the report (p ping, c region, r reportLocation, u user, t timer, …); absent for an automatic update.
      trigger: '/t',
      // conn (extended data): w WiFi, o offline, m mobile.
      connection: '/conn',
    },
    point: { column: 'position', lon: '/lon', lat: '/lat' },
  },
  columns: {
    device: 'string',
    time: 'timestamptz',
    position: 'geometry',
    accuracy_m: 'double',
    altitude_m: 'double',
    speed_kmh: 'double',
    course_deg: 'double',
    battery_pct: 'int',
    battery_status: 'int',
    tracker_id: 'string',
    trigger: 'string',
    connection: 'string',
  },
  require: { '/_type': 'location' },
  // A queued message is POSTed again when the endpoint was unreachable, and iOS may re-encode it with
  // its keys in another order, so the bytes are no identity. tst is: the booklet notes that a ping
  // carries the current time "so that it doesn't look like a duplicate", i.e. one fix, one tst.
  // tid separates phones that share one path id. (Android's `_id` would be better but iOS sends none.)
  naturalId: ['/tst', '/tid'],
  // "If the HTTP endpoint returns a status code 200 it will typically return an empty JSON payload array []."
  answer: { contentType: 'application/json', body: '[]' },
}
