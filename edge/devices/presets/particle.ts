// A Particle webhook with the default data: event, data, coreid, published_at. A webhook made with
// only an event name and a URL posts them as a form; the JSON request format posts them as a JSON
// object; GET puts them in the query string. The pointers are the same for all three.
import type { Preset } from '../types.ts'

export const particle: Preset = {
  name: 'particle',
  summary:
    'Particle webhook with the default data (event, data, coreid, published_at) as a form, JSON or GET query; the event data is stored as the string the device published.',
  docs: ['https://docs.particle.io/reference/cloud-apis/webhooks/'],
  mapping: {
    columns: {
      // coreid: the Device ID of the publishing device (24 hex digits); better than the path id, since
      // one webhook serves every device of a sandbox or product.
      device: '/coreid',
      event: '/event',
      // The published value, always a string (JSON text too, if the firmware publishes JSON).
      data: '/data',
      // When the event was published, RFC 3339 with milliseconds ("2017-02-01T21:08:05.763Z").
      time: '/published_at',
    },
  },
  columns: {
    device: 'string',
    event: 'string',
    data: 'string',
    time: 'timestamptz',
  },
  // No naturalId. A re-sent webhook request carries the same default data, so its bytes already
  // identify it. A device that retransmits an event (Particle delivers "at least once") reaches the
  // cloud twice, and published_at, the cloud's stamp, may then differ, so no pointer set would catch
  // that either. And users often replace the default data with their own template (noDefaults), where
  // these pointers would be absent. (The reference documents no fw_version, public or userid field in
  // the default data today, so none is mapped.)
}
