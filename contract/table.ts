// What a sink adds to its table (spec "The roll": the first roll's changes).

/**
 * The optional timestamptz column the first roll adds: when the intake received the row's batch
 * (x-amz-meta-received), never the producer's say. A keyed sink's latest row wins by it.
 */
export const INGEST_TS = '__ingest_ts'
