package lhbox;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.data.parquet.GenericParquetWriter;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.parquet.Parquet;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Apache Iceberg Java appends to a table through lhbox's /iceberg (iceberg-rest-java.test.ts): one
 * Parquet data file written by the table's own FileIO (S3FileIO, which signs each request at the
 * catalog's sign endpoint when loadTable's config says s3.remote-signing-enabled) and one fast append.
 * Rows: the table's `x` (long) from the arguments after the table, `s` (string) "java-<x>", every
 * other column null. Prints {"snapshot_id", "file"}.
 *
 * <p>Arguments: --uri U --warehouse W --credential ID:KEY [--name value …] TABLE X…
 */
public final class RestAppend {
  private RestAppend() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    String table = null;
    java.util.List<Long> xs = new java.util.ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].startsWith("--")) props.put(args[i].substring(2), args[++i]);
      else if (table == null) table = args[i];
      else xs.add(Long.parseLong(args[i]));
    }
    if (table == null) throw new IllegalArgumentException("name a table: ns.table");
    PrintStream stdout = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    try (RESTCatalog catalog = new RESTCatalog()) {
      catalog.initialize("lhbox", props);
      Table t = catalog.loadTable(TableIdentifier.parse(table));
      String path = t.locationProvider().newDataLocation("java-" + UUID.randomUUID() + ".parquet");
      OutputFile out = t.io().newOutputFile(path);
      DataWriter<Record> writer =
          Parquet.writeData(out)
              .schema(t.schema())
              .createWriterFunc(GenericParquetWriter::create)
              .withSpec(t.spec())
              .overwrite()
              .build();
      try (writer) {
        for (long x : xs) {
          GenericRecord row = GenericRecord.create(t.schema());
          row.setField("x", x);
          row.setField("s", "java-" + x);
          writer.write(row);
        }
      }
      DataFile file = writer.toDataFile();
      t.newAppend().appendFile(file).commit();
      StringBuilder json = new StringBuilder("{\"snapshot_id\":").append(t.currentSnapshot().snapshotId()).append(",\"file\":");
      Json.string(json, file.location());
      stdout.println(json.append('}'));
    }
  }
}
