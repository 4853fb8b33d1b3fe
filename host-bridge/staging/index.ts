// What other modules may use from staging.
export { stageBundle, normalisedMode, type StagedEntry, type StageOptions, type StageResult } from "./stage-bundle";
export {
  surveyTree,
  DEFAULT_STAGING_CAPS,
  type Survey,
  type SurveyEntry,
  type StagingCaps,
  type SurveyResult,
} from "./survey-tree";
export { NEVER_INSTALLED_NAMES, isNeverInstalled } from "./never-installed";
export { refuse, type Refusal } from "./refusal";
export { firstStopInOrder, mapInOrder, FILES_IN_FLIGHT } from "./bounded-parallel";
