// rocksdb-native ships no types; core/rocks.ts describes the part it uses.
declare module 'rocksdb-native' {
  const RocksDB: unknown
  export default RocksDB
}
