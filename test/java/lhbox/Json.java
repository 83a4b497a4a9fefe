package lhbox;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * Iceberg values as JSON in the one encoding of the interop scripts (test/interop/interop_common.py),
 * so that what Java reads compares with what PyIceberg reads: longs and decimals with their exact
 * digits, doubles as Java's round-trip form (a float widened to double first), times with 6 digits.
 */
final class Json {
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS");
  private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS");
  private static final DateTimeFormatter TS_NS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSSSS");

  private Json() {}

  static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
        }
      }
    }
    out.append('"');
  }

  /** A row of `struct` as an object of its fields in schema order. */
  static void record(StringBuilder out, Types.StructType struct, Record row) {
    out.append('{');
    List<Types.NestedField> fields = struct.fields();
    for (int i = 0; i < fields.size(); i++) {
      if (i > 0) out.append(',');
      string(out, fields.get(i).name());
      out.append(':');
      value(out, fields.get(i).type(), row.get(i));
    }
    out.append('}');
  }

  static void value(StringBuilder out, Type type, Object v) {
    if (v == null) {
      out.append("null");
      return;
    }
    switch (type.typeId()) {
      case BOOLEAN, INTEGER, LONG -> out.append(v);
      case FLOAT -> dbl(out, (double) (Float) v);
      case DOUBLE -> dbl(out, (Double) v);
      case DECIMAL -> string(out, ((BigDecimal) v).toPlainString());
      case DATE -> string(out, v.toString());
      case TIME -> string(out, ((LocalTime) v).format(TIME));
      case TIMESTAMP -> string(out, timestamp(((Types.TimestampType) type).shouldAdjustToUTC(), v, TS));
      case TIMESTAMP_NANO -> string(out, timestamp(((Types.TimestampNanoType) type).shouldAdjustToUTC(), v, TS_NS));
      case STRING -> string(out, v.toString());
      case UUID -> string(out, ((UUID) v).toString());
      case FIXED -> string(out, Base64.getEncoder().encodeToString((byte[]) v));
      case BINARY -> string(out, Base64.getEncoder().encodeToString(bytes((ByteBuffer) v)));
      case STRUCT -> record(out, type.asStructType(), (Record) v);
      case LIST -> {
        Type element = type.asListType().elementType();
        out.append('[');
        boolean first = true;
        for (Object e : (List<?>) v) {
          if (!first) out.append(',');
          first = false;
          value(out, element, e);
        }
        out.append(']');
      }
      case MAP -> {
        Types.MapType map = type.asMapType();
        out.append('[');
        boolean first = true;
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
          if (!first) out.append(',');
          first = false;
          out.append('[');
          value(out, map.keyType(), e.getKey());
          out.append(',');
          value(out, map.valueType(), e.getValue());
          out.append(']');
        }
        out.append(']');
      }
      default -> throw new IllegalArgumentException("no JSON encoding for " + type);
    }
  }

  private static void dbl(StringBuilder out, double d) {
    if (Double.isNaN(d)) string(out, "NaN");
    else if (Double.isInfinite(d)) string(out, d > 0 ? "Infinity" : "-Infinity");
    else out.append(Double.toString(d)); // round-trips exactly (not always the shortest form on Java 17)
  }

  private static String timestamp(boolean utc, Object v, DateTimeFormatter f) {
    if (!utc) return ((LocalDateTime) v).format(f);
    return ((OffsetDateTime) v).withOffsetSameInstant(ZoneOffset.UTC).format(f) + "+00:00";
  }

  private static byte[] bytes(ByteBuffer b) {
    ByteBuffer d = b.duplicate();
    byte[] out = new byte[d.remaining()];
    d.get(out);
    return out;
  }
}
