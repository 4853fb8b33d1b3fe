// The hello worker as the entry of a bundle the product's config generator can serve: that
// config declares the gateway's Durable Object namespaces, so their classes are exported from
// the same built bundle (never instantiated: hello calls none of them).
export * from "../../dist/worker.js";
export { default } from "./hello.js";
