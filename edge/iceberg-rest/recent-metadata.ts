// Table metadata this isolate (or Node process) read or wrote lately, for the REST catalog's loads,
// commits and S3 signer. A metadata file never changes once written, and every use reads the table's
// row for its current location first, so an entry is never a stale table: a commit from anywhere
// moves the row, and the next load here reads the new file. Plain data, no I/O object: it may outlive
// a Worker's request. Each file's text is kept beside its parse, so a load answers it as stored
// (no JSON written per request). Bounded by entries and by the files' JSON size, counted twice for
// the parse and the text (an isolate has 128 MB).
import { MetadataCache } from '../../iceberg/catalog/metadata-cache.ts'

const RECENT_METADATA_FILES = 64
const RECENT_METADATA_CHARS = 16 * 1024 * 1024

export const recentMetadata = new MetadataCache(RECENT_METADATA_FILES, RECENT_METADATA_CHARS, true)
