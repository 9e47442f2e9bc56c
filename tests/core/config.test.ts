// Loading the table of settings (config/settings.ts): defaults, then variables, then flags; each kind's text
// parsed one way for variables and flags alike; a wrong value refused naming the flag and the variable.
import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../config/config.ts'
import { serverConfig } from '../../config/server-config.ts'
import { DEFAULTS, SETTINGS } from '../../config/settings.ts'

t.test('nothing set: every default, and no value for a setting without one', async (t) => {
  const config = loadConfig('dev', {}, {})
  t.same({ ...config }, { ...DEFAULTS, mode: 'dev' })
  t.notOk('clickhouseUrl' in config, 'an optional setting stays unset')
  t.ok(Object.isFrozen(config))
})

t.test('a flag wins over its variable, the variable over the default', async (t) => {
  t.equal(loadConfig('dev', {}, { SLUICE_MAX_EVENTS: '7' }).maxEvents, 7)
  t.equal(loadConfig('dev', { maxEvents: '9' }, { SLUICE_MAX_EVENTS: '7' }).maxEvents, 9)
  t.equal(loadConfig('dev', {}, { SLUICE_MAX_EVENTS: '' }).maxEvents, DEFAULTS.maxEvents, 'empty is unset')
})

t.test('a switch is true, false, 1 or 0; anything else is refused, naming it', async (t) => {
  for (const [text, value] of [
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ] as const)
    t.equal(loadConfig('dev', {}, { SLUICE_KAFKA_TLS: text }).kafkaTls, value, text)
  t.throws(() => loadConfig('dev', {}, { SLUICE_KAFKA_TLS: 'yes' }), {
    code: 'CONFIG_INVALID',
    message: /^kafkaTls \(--kafka-tls \/ SLUICE_KAFKA_TLS\): Expected boolean/,
  })
})

t.test('a choice is taken in any case; an unknown one is refused, naming it', async (t) => {
  t.equal(loadConfig('dev', {}, { SLUICE_LOG_LEVEL: 'DEBUG' }).logLevel, 'debug')
  t.throws(() => loadConfig('dev', {}, { SLUICE_LOG_LEVEL: 'loud' }), {
    code: 'CONFIG_INVALID',
    message: /^logLevel \(--log-level \/ SLUICE_LOG_LEVEL\)/,
  })
})

t.test('a number out of its range is refused, naming it', async (t) => {
  t.throws(() => loadConfig('dev', {}, { SLUICE_MAX_JSON_DEPTH: '1001' }), {
    message:
      /^maxJsonDepth \(--max-json-depth \/ SLUICE_MAX_JSON_DEPTH\): Expected integer to be less or equal to 1000/,
  })
  t.throws(() => loadConfig('dev', {}, { SLUICE_PORT: 'http' }), { message: /^port \(--port \/ SLUICE_PORT\)/ })
})

t.test('on the command line: a switch off by default is bare, one on by default takes a value', async (t) => {
  t.equal(serverConfig('dev', ['--watch'], {}).watch, true)
  t.equal(serverConfig('dev', ['--local-log-share-values', 'false'], {}).localLogShareValues, false)
  t.equal(serverConfig('dev', [], {}).localLogShareValues, SETTINGS.localLogShareValues.default)
})

t.test('a list is a comma list, or its flag repeated', async (t) => {
  t.same(loadConfig('dev', {}, { SLUICE_TRUST_PROXY: '10.0.0.1, 10.0.0.2,' }).trustProxy, ['10.0.0.1', '10.0.0.2'])
  const args = ['--trust-proxy', '10.0.0.1', '--trust-proxy', '10.0.0.2,10.0.0.3']
  t.same(serverConfig('dev', args, {}).trustProxy, ['10.0.0.1', '10.0.0.2', '10.0.0.3'])
  t.same(serverConfig('dev', ['--role', 'ingest', '--role', 'api'], {}).roles, ['ingest', 'api'])
})

t.test('a secret from its file; an unreadable file is refused naming the file setting', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sluice-config-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'key')
  await writeFile(file, '0123456789abcdef\n')
  t.equal(loadConfig('start', {}, { SLUICE_SIGNING_KEY_FILE: file }).signingKey, '0123456789abcdef')
  t.equal(serverConfig('start', ['--signing-key-file', file], {}).signingKey, '0123456789abcdef')
  t.throws(() => loadConfig('start', {}, { SLUICE_SIGNING_KEY_FILE: join(dir, 'missing') }), {
    code: 'CONFIG_INVALID',
    message: /^signingKey \(--signing-key-file \/ SLUICE_SIGNING_KEY_FILE\): cannot read .*: ENOENT/,
  })
})
