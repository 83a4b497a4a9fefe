package lhbox;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.rest.RESTCatalog;

/**
 * Apache Iceberg Java's RESTCatalog on lhbox's /iceberg (test/integration/iceberg-rest-java.test.ts):
 * lists the namespaces and the tables of the table's namespace, loads the table and scans it with
 * IcebergGenerics, and prints one JSON document: {"namespaces", "tables", "snapshot_id", "rows"}.
 *
 * <p>Arguments: --uri U --warehouse W (--token KEY | --credential ID:KEY) [--s3.access-key-id …
 * and any other catalog property as --name value] TABLE. The store's endpoint, region and path-style
 * addressing come from the catalog's /v1/config, as for any engine.
 */
public final class RestScan {
  private RestScan() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put("io-impl", "org.apache.iceberg.aws.s3.S3FileIO");
    String table = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].startsWith("--")) props.put(args[i].substring(2), args[++i]);
      else table = args[i];
    }
    if (table == null) throw new IllegalArgumentException("name a table: ns.table");
    PrintStream stdout = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    try (RESTCatalog catalog = new RESTCatalog()) {
      catalog.initialize("lhbox", props);
      TableIdentifier id = TableIdentifier.parse(table);
      StringBuilder out = new StringBuilder("{\"namespaces\":[");
      List<Namespace> namespaces = catalog.listNamespaces();
      for (int i = 0; i < namespaces.size(); i++) {
        if (i > 0) out.append(',');
        Json.string(out, namespaces.get(i).toString());
      }
      out.append("],\"tables\":[");
      List<TableIdentifier> tables = catalog.listTables(id.namespace());
      for (int i = 0; i < tables.size(); i++) {
        if (i > 0) out.append(',');
        Json.string(out, tables.get(i).toString());
      }
      Table t = catalog.loadTable(id);
      Snapshot current = t.currentSnapshot();
      out.append("],\"snapshot_id\":").append(current == null ? "null" : Long.toString(current.snapshotId()));
      out.append(",\"rows\":[");
      boolean first = true;
      try (CloseableIterable<Record> rows = IcebergGenerics.read(t).build()) {
        for (Record row : rows) {
          if (!first) out.append(',');
          first = false;
          Json.record(out, t.schema().asStruct(), row);
        }
      }
      stdout.println(out.append("]}"));
    }
  }
}
