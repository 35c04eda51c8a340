// RFC 7541 Appendix C's header block examples, byte for byte: each block, the list it carries and the dynamic table's size after it.

/** One block of an example sequence (each sequence shares one encoder and one decoder). */
export interface ExampleBlock {
  readonly hex: string;
  /** What our encoder sends where it differs from the RFC's bytes, and why in a comment there. */
  readonly ourHex?: string;
  readonly fields: readonly string[];
  readonly tableSize: number;
}

/** A sequence of blocks on one connection and direction. */
export interface ExampleSequence {
  readonly name: string;
  readonly huffman: boolean;
  /** 256 in C.5 and C.6: both sides start with that table (the encoder announces it with a size update). */
  readonly tableMax: number;
  readonly blocks: readonly ExampleBlock[];
}

const request1 = [":method", "GET", ":scheme", "http", ":path", "/", ":authority", "www.example.com"];
const request2 = [...request1, "cache-control", "no-cache"];
const request3 = [":method", "GET", ":scheme", "https", ":path", "/index.html", ":authority", "www.example.com", "custom-key", "custom-value"];
const response1 = [":status", "302", "cache-control", "private", "date", "Mon, 21 Oct 2013 20:13:21 GMT", "location", "https://www.example.com"];
const response2 = [":status", "307", "cache-control", "private", "date", "Mon, 21 Oct 2013 20:13:21 GMT", "location", "https://www.example.com"];
const response3 = [
  ":status", "200", "cache-control", "private", "date", "Mon, 21 Oct 2013 20:13:22 GMT", "location", "https://www.example.com",
  "content-encoding", "gzip", "set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1",
];

/** C.3 to C.6: requests and responses, without and with Huffman coding. */
export const EXAMPLE_SEQUENCES: readonly ExampleSequence[] = [
  {
    name: "C.3 requests without Huffman",
    huffman: false,
    tableMax: 4096,
    blocks: [
      { hex: "828684410f7777772e6578616d706c652e636f6d", fields: request1, tableSize: 57 },
      { hex: "828684be58086e6f2d6361636865", fields: request2, tableSize: 110 },
      { hex: "828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565", fields: request3, tableSize: 164 },
    ],
  },
  {
    name: "C.4 requests with Huffman",
    huffman: true,
    tableMax: 4096,
    blocks: [
      { hex: "828684418cf1e3c2e5f23a6ba0ab90f4ff", fields: request1, tableSize: 57 },
      { hex: "828684be5886a8eb10649cbf", fields: request2, tableSize: 110 },
      { hex: "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf", fields: request3, tableSize: 164 },
    ],
  },
  {
    name: "C.5 responses without Huffman",
    huffman: false,
    tableMax: 256,
    blocks: [
      {
        hex: "4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d",
        fields: response1,
        tableSize: 222,
      },
      { hex: "4803333037c1c0bf", fields: response2, tableSize: 222 },
      {
        hex:
          "88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d415344" +
          "4a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31",
        fields: response3,
        tableSize: 215,
      },
    ],
  },
  {
    name: "C.6 responses with Huffman",
    huffman: true,
    tableMax: 256,
    blocks: [
      {
        hex: "488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
        fields: response1,
        tableSize: 222,
      },
      // "307" takes 3 octets Huffman-coded or raw: the RFC codes it, nghttp2 and we send it raw (Huffman only when shorter).
      { hex: "4883640effc1c0bf", ourHex: "4803333037c1c0bf", fields: response2, tableSize: 222 },
      {
        hex:
          "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b39" +
          "60d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007",
        fields: response3,
        tableSize: 215,
      },
    ],
  },
];

/** C.2's single representations, decoded on a fresh table: never-indexed marks the field as such. */
export const EXAMPLE_FIELDS: readonly { name: string; hex: string; fields: readonly string[]; tableSize: number; neverIndexed: readonly number[] }[] = [
  { name: "C.2.1 literal with indexing", hex: "400a637573746f6d2d6b65790d637573746f6d2d686561646572", fields: ["custom-key", "custom-header"], tableSize: 55, neverIndexed: [] },
  { name: "C.2.2 literal without indexing", hex: "040c2f73616d706c652f70617468", fields: [":path", "/sample/path"], tableSize: 0, neverIndexed: [] },
  { name: "C.2.3 literal never indexed", hex: "100870617373776f726406736563726574", fields: ["password", "secret"], tableSize: 0, neverIndexed: [0] },
  { name: "C.2.4 indexed field", hex: "82", fields: [":method", "GET"], tableSize: 0, neverIndexed: [] },
];
