// What other modules may use from digest.
export { canonicalJson } from "../../workers/contracts/canonical-json";
export {
  canonicalListing,
  hashInstalledTree,
  listingOfStaged,
  type ListingEntry,
  type ListingResult,
  type ListingOptions,
} from "./canonical-listing";
export { consentDigest } from "./consent-digest";
