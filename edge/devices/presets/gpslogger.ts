// GPSLogger for Android, "Log to custom URL": the app substitutes %PLACEHOLDERS in a URL the user
// types and sends one request per point (GET by default). The parameter names below are the app's
// own: they are the names its %ALL placeholder expands to, so `?%ALL` works as well as the template.
import type { Preset } from '../types.ts'

/** The query to append to this route's URL in GPSLogger's "URL" setting (after `?`). */
const URL_TEMPLATE = 'lat=%LAT&lon=%LON&time=%TIME&alt=%ALT&acc=%ACC&spd=%SPD&dir=%DIR&batt=%BATT&sat=%SAT&prov=%PROV'

export const gpslogger: Preset = {
  name: 'gpslogger',
  summary: `GPSLogger for Android, Log to custom URL: set the URL to this route followed by ?${URL_TEMPLATE} (GET or POST).`,
  docs: [
    'https://github.com/mendhak/gpslogger/blob/master/assets/text/faq/faq16-custom-url.md',
    'https://github.com/mendhak/gpslogger/blob/master/gpslogger/src/main/java/com/mendhak/gpslogger/senders/customurl/CustomUrlManager.java',
    'https://github.com/mendhak/gpslogger/blob/master/gpslogger/src/main/java/com/mendhak/gpslogger/ui/fragments/settings/CustomUrlFragment.java',
  ],
  mapping: {
    columns: {
      // The app sends no device name unless the user adds %SER or %AID: the route's path id.
      device: { device: true },
      // %TIME: the fix time in UTC, ISO 8601 with milliseconds ("2016-03-05T19:24:29.949Z"), copied.
      // (%TIMESTAMP would be epoch seconds, losing the milliseconds.)
      time: '/time',
      altitude_m: '/alt',
      accuracy_m: '/acc',
      // %SPD: Android's speed in m/s (%SPD_KPH would be km/h).
      speed_mps: '/spd',
      course_deg: '/dir',
      // %BATT: percent, as a float ("91.0").
      battery_pct: '/batt',
      satellites: '/sat',
      // %PROV: the location provider (gps, network, …).
      provider: '/prov',
    },
    point: { column: 'position', lon: '/lon', lat: '/lat' },
  },
  columns: {
    device: 'string',
    time: 'timestamptz',
    position: 'geometry',
    altitude_m: 'double',
    accuracy_m: 'double',
    speed_mps: 'double',
    course_deg: 'double',
    battery_pct: 'double',
    satellites: 'int',
    provider: 'string',
  },
  // The FAQ: with "Allow auto sending" the app also re-sends every logged point from its CSV file,
  // and "it is your responsibility to 'deduplicate' ... a good idea to send a timestamp along". The
  // fix time (milliseconds) is that timestamp; the re-sent request need not match the first byte for byte.
  naturalId: ['/time'],
}
