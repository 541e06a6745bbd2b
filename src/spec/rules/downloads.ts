import { DOWNLOAD_IDS } from '../../matrix/index.js';
import { didYouMean } from '../suggest.js';
import { error, type Rule } from './context.js';

/**
 * `spec.downloads` keys are download ids the matrix knows; a new source URL
 * comes with the SHA256 its file must have (a URL alone would make a file of
 * unknown content trusted).
 */
export const downloadOverrides: Rule = (ctx) =>
  Object.entries(ctx.spec.downloads).flatMap(([id, d]) => {
    const path = `spec.downloads.${id}`;
    if (!DOWNLOAD_IDS.includes(id)) {
      const near = didYouMean(id, DOWNLOAD_IDS);
      return [
        error(
          'downloads.unknown',
          path,
          `"${id}" is not a download kubemix makes`,
          `${near === undefined ? '' : `did you mean ${near}? `}known ids: ${DOWNLOAD_IDS.join(', ')}`,
        ),
      ];
    }
    if (d.url !== undefined && d.sha256 === undefined) {
      return [
        error(
          'downloads.url-without-sha256',
          `${path}.url`,
          `a new source for ${id} needs the SHA256 its file must have`,
          `add ${path}.sha256 (sha256sum of the file)`,
        ),
      ];
    }
    return [];
  });
