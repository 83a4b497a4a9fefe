// node-postgres' Client for the Worker's Hyperdrive path (edge/database.ts), behind a declaration of
// its own (pg-client.d.ts): pg's declarations reference Node's types, which the Worker's type program
// keeps out (test/unit/lint-rules.test.ts). The bundle gets pg itself, with its Workers socket support.
export { Client } from 'pg'
