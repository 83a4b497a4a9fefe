// The Things Stack (The Things Network v3) webhook, "Uplink message" type. One JSON object per uplink.
import type { Preset } from '../types.ts'

export const ttn: Preset = {
  name: 'ttn',
  summary:
    'The Things Stack (TTN v3) webhook: base URL = this route with {/devID} as the device id (…/devices{/devID}), only "Uplink message" enabled; the decoded payload is stored as JSON text.',
  docs: [
    'https://www.thethingsindustries.com/docs/integrations/data-formats/',
    'https://www.thethingsindustries.com/docs/integrations/webhooks/path-variables/',
    'https://www.thethingsindustries.com/docs/integrations/webhooks/retries/',
    'https://www.thethingsindustries.com/docs/integrations/cloud-integrations/azure-iot-central/device-twin/',
    'https://github.com/TheThingsNetwork/lorawan-stack/blob/v3.32/pkg/applicationserver/applicationserver.go',
  ],
  mapping: {
    columns: {
      // The payload names the device (TTN's device id, unique in its application); better than the path id.
      device: '/end_device_ids/device_id',
      dev_eui: '/end_device_ids/dev_eui',
      // The Network Server's reception time. It has nanoseconds ("2020-02-12T15:15:45.789585559Z"),
      // which a timestamptz (microseconds) refuses rather than rounds: hence timestamptz_ns.
      time: '/uplink_message/received_at',
      // Empty fields are omitted ("Empty fields are omitted from payloads"): f_cnt 0 arrives absent (null).
      // A 32-bit counter: long, since it can pass 2^31.
      f_cnt: '/uplink_message/f_cnt',
      f_port: '/uplink_message/f_port',
      // Whatever the device's payload formatter returned, as one JSON text.
      payload: { pointer: '/uplink_message/decoded_payload', as: 'json' },
      // The first gateway of rx_metadata (the list is per gateway antenna, in no documented order).
      gateway: '/uplink_message/rx_metadata/0/gateway_ids/gateway_id',
      rssi: '/uplink_message/rx_metadata/0/rssi',
      snr: '/uplink_message/rx_metadata/0/snr',
    },
    // locations["frm-payload"] is the location The Things Stack infers from the decoded payload
    // (latitude/longitude, lat/lon, gps_N, … keys), the one a tracker moves; locations.user (the
    // docs' example, SOURCE_REGISTRY) is the pin set by hand in the console, the same on every uplink.
    // Caveat from the Application Server's code: `locations` is read from the device's location
    // registry, which keeps the last solved frm-payload location, so an uplink without a fix can
    // carry the previous fix. For fixed sensors, point this at /uplink_message/locations/user/… instead.
    point: {
      column: 'position',
      lon: '/uplink_message/locations/frm-payload/longitude',
      lat: '/uplink_message/locations/frm-payload/latitude',
    },
  },
  columns: {
    device: 'string',
    dev_eui: 'string',
    time: 'timestamptz_ns',
    f_cnt: 'long',
    f_port: 'int',
    payload: 'string',
    gateway: 'string',
    rssi: 'double',
    snr: 'double',
    position: 'geometry',
  },
  // One uplink: a webhook retry (7 tries over about 72 minutes, by default) repeats the message, so all four
  // values repeat. f_cnt alone is not an identity: frame counters restart at 0 on every join (and an
  // ABP reset), and the ledger keeps ids for 7 days, so a real new uplink would be taken for a retry.
  // uplink_message.received_at is stamped once by the Network Server with nanoseconds, so a new
  // uplink never repeats it; it is chosen over the top-level received_at (the Application Server's
  // clock) so that the same uplink handed to the Application Server twice is still stored once.
  // Application and device id: one webhook URL may serve every device of an application.
  naturalId: ['/end_device_ids/application_ids/application_id', '/end_device_ids/device_id', '/uplink_message/f_cnt', '/uplink_message/received_at'],
}
